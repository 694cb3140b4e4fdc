"""Times rosbags reading every message of the bags `benches/read.rs` writes.

    rosbags_read.py target/bench-rosbag2

Prints the best of five full reads of each bag (seconds) and its throughput.
"""

import sys
import time
from pathlib import Path

from rosbags.rosbag2 import Reader


def read_all(path):
    n = 0
    with Reader(path) as reader:
        for _, _, data in reader.messages():
            n += len(data)
    return n


def main():
    root = Path(sys.argv[1])
    for name, path in [
        ("db3", root / "single" / "single_0.db3"),
        ("split_dir", root / "split"),
        ("mcap_dir", root / "mcap"),
    ]:
        best = None
        for _ in range(5):
            start = time.perf_counter()
            size = read_all(path)
            took = time.perf_counter() - start
            best = took if best is None else min(best, took)
        print(f"{name}: {best * 1000:.1f} ms ({size / best / 1e6:.0f} MB/s, {size} bytes)")


if __name__ == "__main__":
    main()
