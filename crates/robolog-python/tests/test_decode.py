"""Decoded values: every message of every ROS 1 sample against rosbags, the value rules
(dicts in definition order, bytes for uint8 arrays, numpy arrays sharing the message's
memory, times), JSON messages, and what cannot be decoded."""

import dataclasses
import json
import math
import struct
import subprocess
import sys

import numpy
import pytest
from rosbags.rosbag1 import Reader as Ros1Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.base import Nodetype

import robolog
from conftest import TESTDATA, bags, rosbag2_bags, rosbags_reference, rosbags_ros2, short

REF_LZ4 = TESTDATA / "bags/generated/ros_comm/ref_lz4.bag"
DEMO = TESTDATA / "samples/demo-zstd.mcap"


def norm_float(value):
    """Floats by their bits, so that NaN payloads and -0.0 compare too."""
    return ("float", struct.pack("<d", float(value)).hex())


def norm_ours(value):
    """robolog's decoded value in a form comparable with rosbags'."""
    if isinstance(value, dict):
        if set(value) == {"sec", "nsec"}:
            return ("time", value["sec"], value["nsec"])
        return [(name, norm_ours(v)) for name, v in value.items()]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return norm_float(value)
    if isinstance(value, bytes):
        return ("bytes", value.hex())
    if isinstance(value, numpy.ndarray):
        assert value.dtype != numpy.uint8, "uint8 arrays are bytes"
        return [norm_ours(v) for v in value.tolist()]
    if isinstance(value, list):
        return [norm_ours(v) for v in value]
    assert isinstance(value, (int, str)), type(value)
    return value


# rosbags' field for messages without fields (CDR gives them one byte; robolog no field).
PLACEHOLDER = "structure_needs_at_least_one_member"


def norm_rosbags(value, store, ros2=False):
    if isinstance(value, (bool, numpy.bool_)):
        return int(bool(value))
    if isinstance(value, (int, numpy.integer)):
        return int(value)
    if isinstance(value, (float, numpy.floating)):
        return norm_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, numpy.ndarray):
        if value.dtype == numpy.uint8:
            return ("bytes", value.tobytes().hex())
        return [norm_rosbags(v, store, ros2) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [norm_rosbags(v, store, ros2) for v in value]
    if dataclasses.is_dataclass(value):
        msgtype = value.__msgtype__
        time_types = ("builtin_interfaces/msg/Time", "builtin_interfaces/msg/Duration")
        if msgtype in time_types and not ros2:
            return ("time", int(value.sec), int(value.nanosec))
        _, fields = store.fielddefs[msgtype]
        out = []
        for name, desc in fields:
            if name == PLACEHOLDER:
                continue
            field = getattr(value, name)
            # rosbags reads a ROS 2 `byte` as int8; it is an octet (robolog: 0 to 255).
            if desc == (Nodetype.BASE, ("byte", 0)) and isinstance(field, int):
                field %= 256
            # ... and a `byte[]` as a list of those: octets, bytes in robolog.
            if (
                desc[0] in (Nodetype.ARRAY, Nodetype.SEQUENCE)
                and desc[1][0][0] == Nodetype.BASE
                and desc[1][0][1][0] in ("byte", "char", "uint8")
                and isinstance(field, (list, numpy.ndarray))
            ):
                field = numpy.array([int(v) % 256 for v in field], dtype=numpy.uint8)
            out.append((name, norm_rosbags(field, store, ros2)))
        return out
    raise TypeError(f"cannot normalise {type(value)}: {value!r}")


def rosbags_values(bag):
    out = []
    with Ros1Reader(bag) as reader:
        stores = {}
        for connection in reader.connections:
            store = get_typestore(Stores.EMPTY)
            store.register(get_types_from_msg(connection.msgdef.data, connection.msgtype))
            stores[connection.id] = store
        for connection, timestamp, raw in reader.messages():
            store = stores[connection.id]
            value = store.deserialize_ros1(raw, connection.msgtype)
            out.append((timestamp, connection.topic, bytes(raw), norm_rosbags(value, store)))
    return sorted(out, key=lambda m: m[:3])


@pytest.mark.parametrize("bag", [b for b in bags() if rosbags_reference(b)], ids=short)
def test_every_ros1_message_decodes_to_what_rosbags_gives(bag):
    expected = rosbags_values(rosbags_reference(bag))
    with robolog.open(bag) as log:
        got = sorted(
            (
                (m.log_time, m.topic, bytes(m.data), norm_ours(m.decode()))
                for m in log.messages()
            ),
            key=lambda m: m[:3],
        )
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected):
        assert ours == theirs


@pytest.mark.parametrize("bag", rosbag2_bags(), ids=short)
def test_every_ros2_message_decodes_to_what_rosbags_gives(bag):
    read = rosbags_ros2(bag, lambda value, store: norm_rosbags(value, store, ros2=True))
    expected = [(t, topic, raw, value) for topic, t, raw, _, value in read if value is not None]
    skipped = len(read) - len(expected)
    # rosbags cannot read some service event schemas (a bare .srv text) and some sqlite3
    # bags' types: those messages are only counted.
    if bag.name in ("mcap-talker", "mcap-convert_a", "only_topics.mcap"):
        assert skipped == 0
    with robolog.open(bag) as log:
        got = {}
        for m in log.messages():
            got.setdefault((m.log_time, m.topic, bytes(m.data)), []).append(norm_ours(m.decode()))
        total = log.message_count
    assert sum(map(len, got.values())) == total == len(expected) + skipped
    for time, topic, data, theirs in expected:
        # Messages with the same time, topic and bytes decode alike.
        assert got[(time, topic, data)][0] == theirs, (topic, time)


def test_ros2_values_follow_the_rules():
    bag = TESTDATA / "rosbag2/mcap-convert_a"
    with robolog.open(bag) as log:
        basic = next(iter(log.messages(topics="b_basictypes"))).decode()
    assert list(basic)[:3] == ["bool_value", "byte_value", "char_value"]
    assert isinstance(basic["bool_value"], bool)
    assert isinstance(basic["float64_value"], float)
    assert isinstance(basic["uint64_value"], int)
    with robolog.open(TESTDATA / "rosbag2/mcap-talker") as log:
        talks = [m.decode() for m in log.messages(topics="/topic")]
        rosout = next(iter(log.messages(topics="/rosout"))).decode()
    assert [t["data"] for t in talks] == [f"Hello, world! {i}" for i in range(10)]
    # builtin_interfaces/Time is the message it is: sec and nanosec.
    assert set(rosout["stamp"]) == {"sec", "nanosec"}
    assert isinstance(rosout["msg"], str)


def first(path, topic):
    with robolog.open(path) as log:
        return next(iter(log.messages(topics=topic))).decode()


def test_values_follow_the_rules():
    imu = first(REF_LZ4, "/imu")
    # Fields in definition order, nested messages as dicts, ROS 1 time as sec/nsec.
    assert list(imu) == [
        "header",
        "orientation",
        "orientation_covariance",
        "angular_velocity",
        "angular_velocity_covariance",
        "linear_acceleration",
        "linear_acceleration_covariance",
    ]
    assert imu["header"] == {
        "seq": 0,
        "stamp": {"sec": 1600000000, "nsec": 0},
        "frame_id": "imu_link",
    }
    assert imu["linear_acceleration"] == {"x": 0.0, "y": 0.0, "z": 9.81}
    covariance = imu["orientation_covariance"]
    assert isinstance(covariance, numpy.ndarray)
    assert covariance.dtype == numpy.float64
    assert covariance.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]

    custom = first(REF_LZ4, "/custom")
    assert isinstance(custom["blob"], bytes)
    assert custom["dur"] == {"sec": 0, "nsec": 500}
    assert custom["names"] == [] and custom["points"] == []
    for name, value in custom.items():
        if isinstance(value, numpy.ndarray):
            assert value.dtype != numpy.uint8, name


def test_without_numpy_arrays_are_lists():
    # numpy is looked up once per process: a fresh one where `import numpy` fails, as when it
    # is not installed (a module set to None in sys.modules does not import).
    script = f"""
import sys
sys.modules["numpy"] = None
import robolog
with robolog.open({str(REF_LZ4)!r}) as log:
    imu = next(iter(log.messages(topics="/imu"))).decode()
assert type(imu["orientation_covariance"]) is list, type(imu["orientation_covariance"])
assert imu["orientation_covariance"] == [float(i) for i in range(9)]
assert all(type(v) is float for v in imu["orientation_covariance"])
print("lists")
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "lists"


def ros1_log(path, definition, type_name, payloads, **settings):
    """A log of one ros1 channel holding `payloads`, written by robolog.Writer."""
    with robolog.Writer(path, **settings) as writer:
        channel = writer.add_channel(
            "/t",
            "ros1",
            schema_name=type_name,
            schema_encoding="ros1msg",
            schema_data=definition.encode(),
        )
        for i, payload in enumerate(payloads):
            writer.write(channel, 1_000 + i, payload)
    return path


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_aligned_arrays_share_the_message_memory(tmp_path, compression):
    # Strings of 0 to 15 bytes before the arrays move them through every alignment.
    payloads = [
        struct.pack("<I", n) + b"x" * n + struct.pack("<I3d", 3, 1.5, -2.0, n)
        for n in range(16)
    ]
    path = ros1_log(
        tmp_path / "arrays.mcap",
        "string s\nfloat64[] v\n",
        "p/Arrays",
        payloads,
        compression=compression,
    )
    shared = copied = 0
    with robolog.open(path) as log:
        for n, message in enumerate(log.messages()):
            array = message.decode()["v"]
            assert array.tolist() == [1.5, -2.0, float(n)]
            assert array.dtype == numpy.float64 and array.flags.aligned
            data = numpy.frombuffer(message.data, numpy.uint8)
            start = message.data.tobytes().index(struct.pack("<3d", 1.5, -2.0, n))
            if (data.__array_interface__["data"][0] + start) % 8 == 0:
                # A read-only view of the message's bytes, not a copy.
                assert numpy.shares_memory(array, data)
                assert not array.flags.writeable
                shared += 1
            else:
                assert not numpy.shares_memory(array, data)
                copied += 1
    assert shared >= 1 and copied >= 1


def test_arrays_outlive_the_log_and_its_messages(tmp_path):
    payload = struct.pack("<I3d", 3, 1.0, 2.0, 3.0)
    path = ros1_log(tmp_path / "a.mcap", "float64[] v\n", "p/V", [payload] * 4)
    with robolog.open(path) as log:
        arrays = [m.decode()["v"] for m in log.messages()]
        views = [m.data for m in log.messages()]
    del log
    assert [a.tolist() for a in arrays] == [[1.0, 2.0, 3.0]] * 4
    assert all(v == payload for v in views)


def test_float_specials_are_floats(tmp_path):
    values = (math.nan, math.inf, -math.inf, -0.0, 5e-324)
    payload = struct.pack("<5d", *values) + struct.pack("<f", math.nan)
    path = ros1_log(
        tmp_path / "f.bag",
        "float64 a\nfloat64 b\nfloat64 c\nfloat64 d\nfloat64 e\nfloat32 f\n",
        "p/F",
        [payload],
    )
    with robolog.open(path) as log:
        value = next(iter(log.messages())).decode()
    # Floats stay floats: no "NaN" strings as in JSON.
    assert all(isinstance(v, float) for v in value.values())
    assert math.isnan(value["a"]) and math.isnan(value["f"])
    assert (value["b"], value["c"], value["e"]) == (math.inf, -math.inf, 5e-324)
    assert math.copysign(1.0, value["d"]) == -1.0


def test_64_bit_integers_are_exact(tmp_path):
    payload = struct.pack("<Qq", 2**64 - 1, -(2**63))
    path = ros1_log(tmp_path / "i.bag", "uint64 a\nint64 b\n", "p/I", [payload])
    with robolog.open(path) as log:
        assert next(iter(log.messages())).decode() == {"a": 2**64 - 1, "b": -(2**63)}


def test_unaligned_arrays_are_aligned_copies():
    seen = 0
    with robolog.open(REF_LZ4) as log:
        for message in log.messages(topics=["/imu", "/custom"]):
            for value in message.decode().values():
                if isinstance(value, numpy.ndarray) and value.itemsize > 1:
                    assert value.flags.aligned
                    assert value.dtype.isnative
                    seen += 1
    assert seen >= 150


def test_json_messages_are_parsed():
    seen = 0
    with robolog.open(DEMO) as log:
        for message in log.messages():
            if message.channel.message_encoding == "json":
                assert message.decode() == json.loads(bytes(message.data))
                seen += 1
    assert seen > 0
    assert first(DEMO, "/points")["label"] == "p0"


def test_undecodable_messages_say_why():
    with robolog.open(DEMO) as log:
        blob = next(iter(log.messages(topics="/blob")))
        with pytest.raises(robolog.DecodeError, match="application/octet-stream"):
            blob.decode()




def test_a_damaged_message_names_its_topic_time_and_offset(tmp_path):
    # The string's length field, at byte 0, claims 9 bytes where 3 follow.
    path = ros1_log(tmp_path / "cut.mcap", "string s\n", "p/S", [b"\x09\0\0\0abc"])
    with robolog.open(path) as log:
        message = next(iter(log.messages()))
        with pytest.raises(robolog.DecodeError) as caught:
            message.decode()
    assert caught.value.topic == "/t"
    assert caught.value.log_time == 1_000
    assert caught.value.offset == 0
    assert "9" in str(caught.value)
