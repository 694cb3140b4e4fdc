"""Writes the small files of testdata/cli/, each showing one thing the CLI must get right.

Run it from this folder with the interop venv's Python (scripts/interop-venv.sh makes it):

    ../../target/interop-venv/bin/python make_files.py

It is deterministic: the same bytes every run. The bags are written by PyPI `rosbags`
(0.11.9), the MCAP files by the official `mcap` writer (1.6.0), or cut from files of
../rosbag2/.
"""

from pathlib import Path

from mcap.writer import CompressionType, Writer as McapWriter
from rosbags.rosbag1 import Writer as BagWriter
from rosbags.typesys import Stores, get_typestore

HERE = Path(__file__).parent
T0 = 1_600_000_000_000_000_000
TYPESTORE = get_typestore(Stores.ROS1_NOETIC)


def ros1_string(text: bytes) -> bytes:
    return len(text).to_bytes(4, "little") + text


def bag(name: str, messages, compression=None) -> None:
    """A bag of std_msgs/String messages on /chatter: (log time, raw bytes) pairs."""
    path = HERE / name
    path.unlink(missing_ok=True)
    writer = BagWriter(path)
    if compression:
        writer.set_compression(compression)
    with writer:
        connection = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=TYPESTORE)
        for time, data in messages:
            writer.write(connection, time, data)


def main() -> None:
    # One message among ten whose string length runs past its end: `cat --decode` reports it
    # and prints the other nine.
    messages = [(T0 + i * 10_000_000, ros1_string(b"hello %d" % i)) for i in range(10)]
    messages[4] = (messages[4][0], (100).to_bytes(4, "little") + b"cut")
    bag("one-bad-message.bag", messages)

    # Forty 64 KiB strings: far more output than a pipe holds, to close it under `cat`.
    bag(
        "large-strings.bag",
        [(T0 + i * 10_000_000, ros1_string(bytes([97 + i % 26]) * 65536)) for i in range(40)],
        compression=BagWriter.CompressionFormat.LZ4,
    )

    # A ROS 2 recording cut inside its only (uncompressed) chunk: five of its seven messages
    # are complete.
    whole = (HERE / "../rosbag2/files/only_topics.mcap").read_bytes()
    (HERE / "only_topics-cut.mcap").write_bytes(whole[:4900])

    # The same cut in an MCAP file with LZ4 chunks of a few messages each: complete chunks and
    # the complete messages of the cut one.
    path = HERE / "lz4-cut.mcap"
    with open(path, "wb") as f:
        writer = McapWriter(f, chunk_size=2048, compression=CompressionType.LZ4)
        writer.start(profile="ros1", library="make_files.py")
        schema = writer.register_schema("std_msgs/String", "ros1msg", b"string data\n")
        channel = writer.register_channel("/chatter", "ros1", schema)
        for i in range(100):
            data = ros1_string(b"message %03d " % i + b"x" * 100)
            writer.add_message(channel, T0 + i * 10_000_000, data, T0 + i * 10_000_000, i)
        writer.finish()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])

    # A channel without messages and a message of zero bytes, for conversions through BDDF.
    with open(HERE / "quiet-channel.mcap", "wb") as f:
        writer = McapWriter(f, compression=CompressionType.NONE)
        writer.start(profile="", library="make_files.py")
        schema = writer.register_schema("demo.Point", "jsonschema", b'{"type":"object"}')
        talking = writer.register_channel("/points", "json", schema)
        writer.register_channel("/quiet", "json", schema, {"why": "never published"})
        writer.add_message(talking, T0, b'{"x":1}', T0, 0)
        writer.add_message(talking, T0 + 10_000_000, b"", T0 + 10_000_000, 1)
        writer.finish()


if __name__ == "__main__":
    main()
