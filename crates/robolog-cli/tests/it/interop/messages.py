"""Prints every message of each file as `topic<TAB>log_time_ns<TAB>sha256(data)`, read by the
reference readers: PyPI rosbags for .bag files, the official mcap package for .mcap files.
Lines are sorted, so that readers of different orders compare equal."""

import hashlib
import sys


def bag_messages(path):
    from rosbags.rosbag1 import Reader

    with Reader(path) as reader:
        for connection, timestamp, raw in reader.messages():
            yield connection.topic, timestamp, bytes(raw)


def mcap_messages(path):
    from mcap.reader import make_reader

    with open(path, "rb") as f:
        for _schema, channel, message in make_reader(f).iter_messages():
            yield channel.topic, message.log_time, message.data


def main():
    for path in sys.argv[1:]:
        read = bag_messages if path.endswith(".bag") else mcap_messages
        lines = sorted(
            f"{topic}\t{time}\t{hashlib.sha256(data).hexdigest()}"
            for topic, time, data in read(path)
        )
        print(f"# {len(lines)} {path}")
        for line in lines:
            print(line)


main()
