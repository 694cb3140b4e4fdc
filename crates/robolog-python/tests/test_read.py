"""Reading every testdata format: counts, times, channels and message bytes against the
reference readers (rosbags for ROS 1 and ROS 2 bags, the conformance suite's own JSON for
MCAP, the Boston Dynamics reader's printout for BDDF)."""

import json
import pathlib
import re

import pytest
from rosbags.rosbag1 import Reader as Ros1Reader

import robolog
from conftest import (
    TESTDATA,
    bags,
    bddf_files,
    mcap_files,
    rosbag2_bags,
    rosbags_ros2,
    rosbags_reference,
    short,
)


def read_all(path):
    with robolog.open(path) as log:
        return [
            (m.topic, m.log_time, m.publish_time, m.sequence, bytes(m.data))
            for m in log.messages()
        ]


@pytest.mark.parametrize("bag", [b for b in bags() if rosbags_reference(b)], ids=short)
def test_bags_hold_what_rosbags_reads(bag):
    reference = rosbags_reference(bag)
    with Ros1Reader(reference) as reader:
        expected = sorted(
            (c.topic, t, bytes(raw)) for c, t, raw in reader.messages()
        )
    with robolog.open(bag) as log:
        got = [(m.topic, m.log_time, bytes(m.data)) for m in log.messages()]
        assert log.message_count == len(got)
        if got:
            assert log.start_time == min(t for _, t, _ in got)
            assert log.end_time == max(t for _, t, _ in got)
        # Bags have no publish times or sequence numbers.
        assert all(m.publish_time is None and m.sequence is None for m in log.messages())
    times = [t for _, t, _ in got]
    assert times == sorted(times), "messages() is in log-time order"
    assert sorted(got) == expected


@pytest.mark.parametrize("bag", [b for b in bags() if rosbags_reference(b)], ids=short)
def test_bag_channels_are_the_connections(bag):
    with Ros1Reader(rosbags_reference(bag)) as reader:
        expected = sorted(
            (c.topic, c.msgtype, c.msgdef.data, c.digest) for c in reader.connections
        )
    with robolog.open(bag) as log:
        got = sorted(
            (
                c.topic,
                c.type_name,
                c.schema.data.decode(),
                c.metadata["md5sum"],
            )
            for c in log.channels
        )
        assert {c.message_encoding for c in log.channels} <= {"ros1"}
        assert {c.schema.encoding for c in log.channels} <= {"ros1msg"}
    # rosbags names types pkg/msg/Type; bags store pkg/Type.
    expected = [(t, ty.replace("/msg/", "/"), d, md5) for t, ty, d, md5 in expected]
    assert got == expected


def test_damaged_bags_read_what_is_intact():
    killed = TESTDATA / "bags/generated/ros_comm/v20_killed.bag"
    with robolog.open(killed) as log:
        assert [p.severity for p in log.problems].count("error") >= 1
        # The recorder was killed inside the 5th chunk, at byte 22805.
        cut = [p for p in log.problems if p.offset == 22805]
        assert ("error", "truncated") in [(p.severity, p.kind) for p in cut], log.problems
        assert all(p.path is None for p in cut)
        assert all(str(p).startswith(f"{p.severity} at byte 22805: ") for p in cut)
        messages = list(log.messages())
    # The CLI's README: 76 messages can be read from the killed recording, where ros_comm's
    # reindex keeps the 65 of its complete chunks.
    assert len(messages) == 76
    reindexed = TESTDATA / "bags/generated/ros_comm/v20_killed_reindexed.bag"
    kept = {(m[0], m[1], m[4]) for m in read_all(reindexed)}
    assert len(kept) == 65
    assert kept <= {(m.topic, m.log_time, bytes(m.data)) for m in messages}


def conformance_expectation(path: pathlib.Path):
    """Messages of a conformance file as its JSON lists them: (topic, log time, publish time,
    sequence, data), with each channel's metadata and schema."""
    records = json.loads(path.with_suffix(".json").read_text())["records"]
    schemas, channels, messages = {}, {}, []
    for record in records:
        fields = dict(record["fields"])
        if record["type"] == "Schema":
            schemas[fields["id"]] = fields
        elif record["type"] == "Channel":
            channels[fields["id"]] = fields
        elif record["type"] == "Message":
            topic = channels[fields["channel_id"]]["topic"]
            messages.append(
                (
                    topic,
                    int(fields["log_time"]),
                    int(fields["publish_time"]),
                    int(fields["sequence"]),
                    bytes(int(b) for b in fields["data"]),
                )
            )
    return schemas, channels, messages


@pytest.mark.parametrize("path", mcap_files(), ids=short)
def test_mcap_files_hold_their_records(path):
    with robolog.open(path) as log:
        got = [
            (m.topic, m.log_time, m.publish_time, m.sequence, bytes(m.data))
            for m in log.messages()
        ]
        assert log.format == "mcap"
        assert log.message_count == len(got)
        # Channels only the chunks define are channels of the log too.
        channels = {c.id: c for c in log.channels}
    if "mcap-conformance" not in str(path):
        assert got == sorted(got, key=lambda m: m[1])
        return
    schemas, expected_channels, expected = conformance_expectation(path)
    assert sorted(got, key=lambda m: m[1]) == sorted(expected, key=lambda m: m[1])
    for cid, fields in expected_channels.items():
        channel = channels[int(cid)]
        assert channel.topic == fields["topic"]
        assert channel.message_encoding == fields["message_encoding"]
        assert channel.metadata == fields["metadata"]
        schema = schemas.get(fields["schema_id"])
        if schema is None:
            assert channel.schema is None
        else:
            assert channel.schema.name == schema["name"]
            assert channel.schema.encoding == schema["encoding"]
            assert channel.schema.data == bytes(int(b) for b in schema["data"])


def bddf_reference_blocks():
    """(timestamp, length) of every data block the Boston Dynamics DataReader printed."""
    text = (TESTDATA / "bddf/sample.txt").read_text()
    section = text.split("===== DataReader")[1].split("\n=====")[0]
    return sorted(
        (int(ts), int(n))
        for ts, n in re.findall(r"block \d+: file_offset=\d+ ts=(\d+) .*? len=(\d+)", section)
    )


def test_bddf_blocks_are_what_the_reference_reader_reads():
    with robolog.open(TESTDATA / "bddf/sample.bddf") as log:
        assert log.format == "bddf"
        got = sorted((m.log_time, len(m.data)) for m in log.messages())
        assert log.message_count == len(got) == 14
        topics = {c.topic for c in log.channels}
    assert got == bddf_reference_blocks()
    assert "bosdyn:channel:example:var=battery.voltage" in topics


@pytest.mark.parametrize("path", bddf_files(), ids=short)
def test_every_bddf_file_opens(path):
    with robolog.open(path) as log:
        count = 0
        try:
            for _ in log.messages():
                count += 1
        except robolog.DataError as e:
            # The damaged samples: the error says where.
            assert e.offset is not None or e.path is not None
        assert count <= log.message_count or log.problems


@pytest.mark.parametrize("bag", rosbag2_bags(), ids=short)
def test_ros2_bags_hold_what_rosbags_reads(bag):
    read = rosbags_ros2(bag)
    expected = sorted((topic, t, raw) for topic, t, raw, _, _ in read)
    expected_topics = {topic: msgtype for topic, _, _, msgtype, _ in read}
    with robolog.open(bag) as log:
        assert log.format in ("rosbag2", "mcap")
        got = [(m.topic, m.log_time, bytes(m.data)) for m in log.messages()]
        assert log.message_count == len(got)
        types = {c.topic: c.type_name for c in log.channels}
        encodings = {c.message_encoding for c in log.channels}
    assert [t for _, t, _ in got] == sorted(t for _, t, _ in got)
    assert sorted(got) == expected
    for topic, msgtype in expected_topics.items():
        assert types[topic] == msgtype
    assert encodings <= {"cdr"}
