"""Prints every message of each ROS 2 MCAP file as `topic<TAB>log_time_ns<TAB>sha256(data)`, read
by PyPI rosbags' rosbag2 reader (which refuses an MCAP file whose header profile is not `ros2`).
Lines are sorted."""

import hashlib
import sys
from pathlib import Path


def main():
    from rosbags.rosbag2 import Reader

    for path in sys.argv[1:]:
        with Reader(Path(path)) as reader:
            lines = sorted(
                f"{connection.topic}\t{timestamp}\t{hashlib.sha256(bytes(raw)).hexdigest()}"
                for connection, timestamp, raw in reader.messages()
            )
        print(f"# {len(lines)} {path}")
        for line in lines:
            print(line)


main()
